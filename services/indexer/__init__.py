"""ragmesh indexer."""
