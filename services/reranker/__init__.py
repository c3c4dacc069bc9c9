"""ragmesh reranker."""
