; TypeScript / TSX edges: calls, `new`, extends / implements, imports, re-exports, type references.
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(extends_clause value: (_) @inherit)
(implements_clause [(type_identifier) (generic_type) (nested_type_identifier)] @implement)
(extends_type_clause type: (_) @inherit)
(import_statement) @import
(export_statement source: (_)) @import
(type_annotation [(type_identifier) (generic_type) (nested_type_identifier)] @ref)
(type_annotation (union_type [(type_identifier) (nested_type_identifier)] @ref))
