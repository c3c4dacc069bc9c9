"""The evaluation harness: labelled cases through the live mesh, metrics, triage, reports, the CI gate."""
