//! The T-SQL layer (issue 4, not built yet): lexer, recursive-descent parser, AST,
//! binder, planner and executor. It reaches storage only through traits it defines
//! (catalog, transaction, table and index access), which `engine` implements.
