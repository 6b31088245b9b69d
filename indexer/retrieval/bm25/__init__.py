"""BM25 beside each collection: the index, its postings over mapped files, the
sorted string tables it looks terms and ids up in, saving, incremental updates and repair."""
