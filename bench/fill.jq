# The jq equivalent of
#   elicit --no-input -a accept -a name=Ada -a email=ada@example.com
# for a JSON-RPC elicitation/create request: a JSON-RPC response whose result
# accepts with the given values and every other field's default, in the
# schema's property order. Simpler than elicit: no shape detection, no
# coercion by kind, no validation (formats, ranges, required), no
# sanitising, no error reporting.
{"name": "Ada", "email": "ada@example.com"} as $given
| .params.requestedSchema.properties as $props
| {jsonrpc: "2.0", id: .id, result: {action: "accept", content: (
    reduce ($props | keys_unsorted[]) as $k ({};
      if $given | has($k) then .[$k] = $given[$k]
      elif $props[$k] | has("default") then .[$k] = $props[$k].default
      else . end))}}
