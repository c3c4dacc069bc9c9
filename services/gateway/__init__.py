"""ragmesh gateway."""
