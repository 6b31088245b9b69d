"""The rows beside each collection (texts, metadata, vectors in arrays a process maps):
reading, writing and repair."""
