from services.gateway.policy import invalid_citations, should_abstain


def test_abstains_below_a_calibrated_threshold_only():
    assert should_abstain(0.2, 0.35, True).reason == "below_threshold"
    assert not should_abstain(0.5, 0.35, True).abstain
    # Fused-order scores (passthrough / degraded) carry no calibrated meaning.
    assert not should_abstain(0.01, 0.35, False).abstain
    assert should_abstain(None, 0.35, True).reason == "no_candidates"


def test_fabricated_citation_ids_are_caught():
    assert invalid_citations(["c1", "c2"], {"c1", "c2", "c3"}) == ""
    assert "c9" in invalid_citations(["c1", "c9"], {"c1", "c2"})
    assert invalid_citations([], {"c1"}) == "answer has no citation"
