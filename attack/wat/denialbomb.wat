;; Needs no grant and asks for none: calls wasmcp.http_request in a loop
;; with a request whose URL is 1 MiB long. Each call is denied (the tool
;; has no http grant), and each denial is kept, URL and all, for the
;; call's error text and the server's log.
(module
  (import "wasmcp" "http_request" (func $request (param i32 i32 i32) (result i32)))
  (memory (export "memory") 17)
  (data (i32.const 0) "{\"method\":\"GET\",\"url\":\"http://")
  (func (export "_start")
    ;; 30 bytes of prefix, then 1 MiB of 'a', then "}
    (memory.fill (i32.const 30) (i32.const 97) (i32.const 1048576))
    (i32.store16 (i32.const 1048606) (i32.const 0x7d22)) ;; '"' '}'
    (loop $l
      (drop (call $request (i32.const 0) (i32.const 1048608) (i32.const 1048640)))
      (br $l))))
