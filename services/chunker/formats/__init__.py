"""Format parsers: bytes of one file type -> a ParsedDocument (canonical text + structure tree)."""
