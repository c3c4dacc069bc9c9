"""Helpers the tests import; conftest.py files keep only fixtures (pytest loads those by itself)."""
