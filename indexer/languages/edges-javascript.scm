; JavaScript edges: calls, `new`, `extends`, imports and re-exports.
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(class_heritage [(identifier) (member_expression)] @inherit)
(import_statement) @import
(export_statement source: (_)) @import
