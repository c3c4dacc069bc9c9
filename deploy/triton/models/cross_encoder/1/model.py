"""Triton python-backend model: scores (query, passage) pairs with an ONNX cross-encoder.

Files next to this one: model.onnx, tokenizer.json and ragmesh-reranker.json (max_length). Runs in
Triton's own environment (numpy<2, onnxruntime, tokenizers), not the services' virtualenv.
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
        self.tokenizer.enable_truncation(self.max_length, strategy="only_second")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(params.get("intra_op_threads", "2"))
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        if args.get("model_instance_kind") == "GPU" and "CUDAExecutionProvider" in ort.get_available_providers():
            device = int(args.get("model_instance_device_id", "0"))
            providers = [("CUDAExecutionProvider", {"device_id": device}), "CPUExecutionProvider"]
        self.session = ort.InferenceSession(str(here / "model.onnx"), options, providers=providers)
        self.input_names = {i.name for i in self.session.get_inputs()}
        pb_utils.Logger.log_info(f"cross_encoder: {card.get('model_id')} {card.get('model_version')} on "
                                 f"{self.session.get_providers()[0]}, max_length {self.max_length}")

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
            out = pb_utils.Tensor("SCORE", scores[start:start + size].reshape(-1, 1))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
            start += size
        return responses

    def _score(self, queries, passages):
        if not queries:
            return np.zeros(0, dtype=np.float32)
        encoded = self.tokenizer.encode_batch(list(zip(queries, passages)))
        feeds = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        logits = self.session.run(None, {k: v for k, v in feeds.items() if k in self.input_names})[0]
        return logits[:, 0].astype(np.float32)

    def finalize(self):
        self.session = None


def _text(value) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
