"""Hybrid recall: retrieve, fuse, expand along links, rank."""
