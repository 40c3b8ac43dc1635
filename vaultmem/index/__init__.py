"""Derived, disposable indexes: the manifest, BM25, embeddings and vectors, the link graph, usage."""
