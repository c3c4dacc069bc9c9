"""Models the tests use (shipped by a package, never downloaded at run time)."""

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
