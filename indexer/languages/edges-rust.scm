; Rust edges: calls, macros, `impl Trait for Type`, supertraits, `use`, parameter types.
(call_expression function: (_) @call)
(macro_invocation macro: (_) @call)
(impl_item trait: (_) @implement)
(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier) (generic_type)] @inherit))
(use_declaration) @import
(parameter type: [(type_identifier) (scoped_type_identifier) (generic_type)] @ref)
