"""ragmesh cli."""
