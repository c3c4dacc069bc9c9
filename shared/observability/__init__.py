"""Tracing (OpenTelemetry) and metrics (Prometheus) shared by every stage."""
