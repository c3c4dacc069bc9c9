"""The HTTP front door: JSON routes, an OpenAI-compatible endpoint and the reviewer page over the gateway."""
