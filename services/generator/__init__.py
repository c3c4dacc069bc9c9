"""ragmesh generator."""
