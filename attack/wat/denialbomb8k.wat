;; The GRANT=1 case of denialbomb.py: a tool with an http grant (for
;; example.com) calls wasmcp.http_request in a loop with a URL of 8,000
;; bytes (under the 8 KiB URL cap) for another host. This one held: the
;; server's memory stayed flat.
(module
  (import "wasmcp" "http_request" (func $request (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"method\":\"GET\",\"url\":\"http://")
  (func (export "_start")
    ;; 30 bytes of prefix, then 8,000 bytes of 'a', then "}
    (memory.fill (i32.const 30) (i32.const 97) (i32.const 8000))
    (i32.store16 (i32.const 8030) (i32.const 0x7d22)) ;; '"' '}'
    (loop $l
      (drop (call $request (i32.const 0) (i32.const 8032) (i32.const 8064)))
      (br $l))))
