//! Extended Events: the home of SQL Server's event system (CREATE EVENT SESSION, the
//! sys.dm_xe_* views, xml_deadlock_report, checkpoint_begin/end, sort_warning,
//! hash_warning, ...). Not built yet; this module is where it goes, beside the other
//! always-on diagnostics, so that every layer can fire events without knowing who
//! listens. The design it will follow:
//!
//! - **Events**: a static table of event definitions (package, name, id, columns); a
//!   firing site checks one atomic "is any session enabled for this event" before it
//!   builds any payload, so a disabled event costs a load and a branch.
//! - **Sessions**: the events a session collects, their actions (session_id,
//!   sql_text, ...) and predicates, started and stopped by ALTER EVENT SESSION.
//! - **Targets**: ring_buffer, event_file, histogram and event_counter, fed by a
//!   dispatcher off the firing thread.
//! - **Observers already waiting for it**: the lock manager's deadlock observer (the
//!   deadlock graph that error 1205 reports) and the checkpoint observer (begin/end
//!   with pages written), and the spill counters of sorts and hash operators.
