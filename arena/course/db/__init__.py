"""Course.db: the one schema, its migrations, and what each table holds."""
