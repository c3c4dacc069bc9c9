"""The stage services of the ragmesh funnel."""
