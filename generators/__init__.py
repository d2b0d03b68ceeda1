"""backendcheck's matrix generator: TOML specs -> gtest case tables + manifest."""
