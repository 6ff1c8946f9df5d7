"""A fleet: poller processes that share the targets through leases in the store
(docs/decisions/0006-pollers-share-targets-by-leases.md)."""
