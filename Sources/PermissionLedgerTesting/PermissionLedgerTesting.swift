// The PermissionLedgerTesting library: being written.
