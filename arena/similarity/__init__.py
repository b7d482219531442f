"""The copying check's engine: source code fingerprinted, pairs of sources sharing passages,
clusters (arena/similarity/fingerprints.py). Imports nothing of arena's other rooms."""
