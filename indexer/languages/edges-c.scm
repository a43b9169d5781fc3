; C edges: calls and includes.
(call_expression function: (_) @call)
(preproc_include) @import
