; Kotlin edges: calls, superclass (constructor call) and interfaces, imports.
(call_expression . (_) @call)
(delegation_specifier (constructor_invocation (user_type) @inherit))
(delegation_specifier (user_type) @implement)
(import_header) @import
