; C++ edges: calls, `new`, base classes, includes, using-declarations.
(call_expression function: (_) @call)
(new_expression type: (_) @call)
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @inherit)
(preproc_include) @import
(using_declaration) @import
