"""The season's logic: uploads, builds, games, phases, ladder, final, grades (no HTTP, no SQL text)."""
