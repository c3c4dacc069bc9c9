"""int8 variants of the exported cross-encoder (ONNX Runtime's dynamic quantisation).

Dynamic quantisation stores the weights as int8 and quantises activations on the fly, so it needs no
calibration data. What it touches decides how much ranking it costs: per-channel scales keep the
projection matrices' outliers (one scale per output column instead of one per tensor), and quantising
only MatMul leaves the embeddings (Gather) and the small classifier in fp32.
"""

import dataclasses
import tempfile
from pathlib import Path

FP32_FILE = "model.onnx"


@dataclasses.dataclass(frozen=True)
class Int8Variant:
    name: str
    per_channel: bool
    op_types: tuple[str, ...] | None  # None: the quantiser's default set (MatMul, Gather, Attention, ...)

    @property
    def file_name(self) -> str:
        return f"model.{self.name}.onnx"


# The variant the training command ships next to the fp32 model; the others are measured by bench-rerank.
SHIPPED = Int8Variant("int8", per_channel=True, op_types=("MatMul",))
VARIANTS = (
    SHIPPED,
    Int8Variant("int8-tensor", per_channel=False, op_types=("MatMul",)),
    Int8Variant("int8-all", per_channel=True, op_types=None),
)


def quantize(model_dir: Path, variant: Int8Variant = SHIPPED) -> Path:
    """Writes `model_dir/<variant.file_name>` from `model_dir/model.onnx` and returns its path. The fp32 graph
    goes through ONNX Runtime's pre-processing (ONNX shape inference, graph optimisation) first, as its docs advise
    (its symbolic shape inference does not complete on the exported BERT graph, so it is skipped)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    source, target = model_dir / FP32_FILE, model_dir / variant.file_name
    with tempfile.TemporaryDirectory(dir=model_dir) as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_dynamic(
            str(prepared),
            str(target),
            per_channel=variant.per_channel,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=list(variant.op_types) if variant.op_types else None,
        )
    return target
