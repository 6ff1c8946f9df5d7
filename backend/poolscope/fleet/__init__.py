"""A fleet: poller processes that share the targets through leases in the store (README "Running a fleet")."""
