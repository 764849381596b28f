;; oob-load: rp_parse reads far outside its memory
;; Hostile guest for the wasm package safety tests; built by scripts/wasm.sh (wat2wasm oob-load.wat).
;; Misbehaves only for batches whose first event data starts with "!", so tests can check recovery.
(module
  (memory (export "memory") 2)
  (data (i32.const 65536) "{\"abi\":1,\"name\":\"hostile\",\"builds\":true,\"parses\":true}")
  (func (export "reprise_abi_v1"))
  (func (export "rp_scratch") (param i32 i32) (result i32) (select (i32.const 65536) (i32.const 4096) (local.get 0)))
  (func (export "rp_describe") (result i64) (i64.const 54))
  (func (export "rp_configure") (param i32) (result i64) (i64.const 0))
  (func (export "rp_build") (param i32) (result i64) (i32.store (i32.const 65536) (i32.const 24)) (i32.store (i32.const 65540) (i32.const 0)) (i32.store (i32.const 65544) (i32.const 0)) (i32.store (i32.const 65548) (i32.const 2)) (i32.store (i32.const 65552) (i32.const 0)) (i32.store (i32.const 65556) (i32.const 0)) (i32.store16 (i32.const 65560) (i32.const 0x7d7b)) (i64.const 26))
  (func (export "rp_open") (param i32 i32) (result i64) (i64.const 0))
  (func (export "rp_parse") (param i32 i32) (result i64) (if (result i64) (i32.eq (i32.load8_u (i32.const 4120)) (i32.const 33)) (then (i64.extend_i32_u (i32.load (i32.const 0xFFFFFFF0)))) (else (i32.store (i32.const 65536) (i32.const 0)) (i32.store (i32.const 65540) (i32.const 0)) (i64.const 8))))
  (func (export "rp_close") (param i32) (result i64) (i32.store (i32.const 65536) (i32.const 48)) (i32.store (i32.const 65540) (i32.const 0)) (i32.store (i32.const 65544) (i32.const 0)) (i32.store (i32.const 65548) (i32.const 0)) (i32.store (i32.const 65552) (i32.const 0)) (i32.store (i32.const 65556) (i32.const 0)) (i32.store (i32.const 65560) (i32.const 0)) (i32.store (i32.const 65564) (i32.const 0)) (i32.store (i32.const 65568) (i32.const 0)) (i32.store (i32.const 65572) (i32.const 0)) (i32.store (i32.const 65576) (i32.const 0)) (i32.store (i32.const 65580) (i32.const 0)) (i64.const 48))
)
