"""ragmesh's common library: configuration, server bootstrap, stage clients, errors, index and embedders."""
