"""The calibrated answer decision's second level through the real mesh: below the threshold, the gateway generates
and answers only when the answer covers the calibration's share of the question. The calibration file is the
shipped one with its levels moved, so the outcome depends on the decision alone, not on any score."""

import dataclasses
import os

import pytest

from services.cli.mesh import Mesh
from shared import calibration
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from tests.support.mesh import ROOT, TENANT, ingest_paths

pytestmark = pytest.mark.integration
SHIPPED = os.path.join(ROOT, "eval", "calibration.json")
QUESTION = "team plan monthly price"


def ask(mesh):
    with mesh.gateway_channel() as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        return gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTION), timeout=60)


def test_below_the_threshold_only_a_covering_answer_is_given(tmp_path):
    calibration_file = str(tmp_path / "calibration.json")
    shipped = calibration.load(SHIPPED)
    # Every question is below the threshold and within the second level.
    within = dataclasses.replace(shipped, threshold=100.0, support_threshold=-100.0, min_coverage=0.0)
    calibration.save(within, calibration_file)
    mesh = Mesh.on_free_ports(str(tmp_path / "data"), extra_env={"RAGMESH_GATEWAY_CALIBRATION_FILE": calibration_file})
    mesh.start(timeout=240)
    try:
        with mesh.gateway_channel() as channel:
            document = tmp_path / "docs" / "prices.md"
            document.parent.mkdir()
            document.write_text("# Prices\n\n| Plan | Monthly price |\n| --- | --- |\n| Team | $79 |\n")
            assert all(
                r.ok for r in ingest_paths(gateway_pb2_grpc.GatewayStub(channel), TENANT, [str(document.parent)])
            )
        answered = ask(mesh)
        assert not answered.answer.abstained, answered.answer
        assert answered.top_rerank_score < 100.0 and answered.answer.coverage > 0.5

        # No answer can cover more than the whole question: the same question is refused below the threshold.
        calibration.save(dataclasses.replace(within, min_coverage=1.01), calibration_file)
        mesh.restart_stage("gateway")
        refused = ask(mesh)
        assert refused.answer.abstained and refused.answer.reason == "below_threshold"
        # The refusal points at the passage the answer would have quoted.
        assert answered.answer.citations[0].chunk_id in [p.chunk.chunk_id for p in refused.suggested_reading]
    finally:
        mesh.stop()
