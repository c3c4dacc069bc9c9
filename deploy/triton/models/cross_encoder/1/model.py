"""Triton python-backend model: scores (query, passage) pairs with the trained cross-encoder.

Files next to this one: model.onnx, tokenizer.json and ragmesh-reranker.json (max_length), and
optionally hf/ (the same weights as a transformers checkpoint). On a GPU instance it runs ONNX Runtime's
CUDA provider when installed, else torch on CUDA from hf/ when torch sees the GPU; everywhere else
ONNX Runtime on the CPU. Runs in Triton's own environment, not the services' virtualenv.
"""

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils
from tokenizers import Tokenizer


class TritonPythonModel:
    def initialize(self, args):
        here = Path(__file__).resolve().parent
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        card = json.loads((here / "ragmesh-reranker.json").read_text())
        self.max_length = int(card.get("max_length", 128))
        self.tokenizer = Tokenizer.from_file(str(here / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        on_gpu = args.get("model_instance_kind") == "GPU"
        device = int(args.get("model_instance_device_id", "0"))
        ort_cuda = "CUDAExecutionProvider" in ort.get_available_providers()
        self.session, self.torch_model = None, None
        if on_gpu and not ort_cuda and (here / "hf").is_dir():
            self.torch_model = _torch_on_cuda(here / "hf", device)
        if self.torch_model is None and not (here / "model.onnx").is_file():
            raise RuntimeError(
                f"cross_encoder: {here} holds only the checkpoint (hf/), which runs with torch on a GPU; "
                "this instance has none: install the model with its model.onnx"
            )
        if self.torch_model is None:
            options = ort.SessionOptions()
            options.intra_op_num_threads = int(params.get("intra_op_threads", "2"))
            options.inter_op_num_threads = 1
            providers = ["CPUExecutionProvider"]
            if on_gpu and ort_cuda:
                providers = [("CUDAExecutionProvider", {"device_id": device}), "CPUExecutionProvider"]
            self.session = ort.InferenceSession(str(here / "model.onnx"), options, providers=providers)
            self.input_names = {i.name for i in self.session.get_inputs()}
        runtime = "torch fp16 on cuda" if self.torch_model is not None else self.session.get_providers()[0]
        pb_utils.Logger.log_info(
            f"cross_encoder: {card.get('model_id')} {card.get('model_version')} on "
            f"{runtime}, max_length {self.max_length}"
        )

    def execute(self, requests):
        # Every request in the dynamic batch goes through one ONNX Runtime call, then is split back.
        queries, passages, sizes = [], [], []
        for request in requests:
            q = pb_utils.get_input_tensor_by_name(request, "QUERY").as_numpy().reshape(-1)
            p = pb_utils.get_input_tensor_by_name(request, "PASSAGE").as_numpy().reshape(-1)
            queries += [_text(x) for x in q]
            passages += [_text(x) for x in p]
            sizes.append(len(q))
        scores = self._score(queries, passages)
        responses, start = [], 0
        for size in sizes:
            out = pb_utils.Tensor("SCORE", scores[start : start + size].reshape(-1, 1))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
            start += size
        return responses

    def _score(self, queries, passages):
        if not queries:
            return np.zeros(0, dtype=np.float32)
        encoded = self.tokenizer.encode_batch(list(zip(queries, passages, strict=True)))
        feeds = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        if self.torch_model is not None:
            return self.torch_model(feeds)
        logits = self.session.run(None, {k: v for k, v in feeds.items() if k in self.input_names})[0]
        return logits[:, 0].astype(np.float32)

    def finalize(self):
        self.session, self.torch_model = None, None


def _torch_on_cuda(folder: Path, device: int):
    """A scoring function over the hf/ checkpoint in fp16 on the GPU, or None when torch has no CUDA."""
    try:
        import torch
        from transformers import AutoModelForSequenceClassification
    except ImportError as exc:
        pb_utils.Logger.log_warn(f"cross_encoder: no torch path on the GPU ({exc}); ONNX Runtime on the CPU")
        return None
    if not torch.cuda.is_available():
        pb_utils.Logger.log_warn("cross_encoder: torch sees no CUDA device; ONNX Runtime on the CPU")
        return None
    target = torch.device("cuda", device)
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).half().to(target).eval()

    def score(feeds):
        with torch.inference_mode():
            tensors = {k: torch.from_numpy(v).to(target) for k, v in feeds.items()}
            return model(**tensors).logits[:, 0].float().cpu().numpy()

    return score


def _text(value) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
