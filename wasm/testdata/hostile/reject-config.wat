;; reject-config: rp_configure rejects every configuration with GUEST_ERROR "unsupported option "mode""
;; Hostile guest for the wasm package and CLI tests; built by scripts/wasm.sh (wat2wasm reject-config.wat).
;; Loads fine: the rejection comes when the host configures an instance, before a run may start.
(module
  (memory (export "memory") 2)
  (data (i32.const 65536) "{\"abi\":1,\"name\":\"evil\",\"builds\":true,\"parses\":true}")
  (data (i32.const 70000) "unsupported option \"mode\"")
  (func (export "reprise_abi_v1"))
  (func (export "rp_scratch") (param i32 i32) (result i32) (select (i32.const 65536) (i32.const 4096) (local.get 0)))
  (func (export "rp_describe") (result i64) (i64.const 51))
  (func (export "rp_configure") (param i32) (result i64) (memory.copy (i32.const 65536) (i32.const 70000) (i32.const 25)) (i64.const 0x400000019))
  (func (export "rp_build") (param i32) (result i64) (i64.const 0x400000000))
  (func (export "rp_open") (param i32 i32) (result i64) (i64.const 0))
  (func (export "rp_parse") (param i32 i32) (result i64) (i32.store (i32.const 65536) (i32.const 0)) (i32.store (i32.const 65540) (i32.const 0)) (i64.const 8))
  (func (export "rp_close") (param i32) (result i64) (i64.const 0x400000000))
)
