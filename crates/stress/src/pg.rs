//! A minimal PostgreSQL client (simple query protocol) and a [`Connector`](crate::Connector)
//! for it: the peer the benchmarks drive with the same runner as Mesquite.
