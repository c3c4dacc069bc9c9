"""ragmesh chunker."""
