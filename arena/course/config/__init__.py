"""Course.toml and the roster read into typed, checked settings."""
