//! BACKUP and RESTORE: the home of full, differential and log backups, their media
//! format, RESTORE ... WITH NORECOVERY / STOPAT, and msdb's backup history. Not built
//! yet; the data-file layer it shares with CREATE DATABASE (creating, opening and
//! listing a database's files) is `instance/files.rs`.
