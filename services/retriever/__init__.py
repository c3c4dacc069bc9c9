"""ragmesh retriever."""
