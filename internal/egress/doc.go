// Package egress makes HTTP requests on a guest's behalf, within what the
// operator granted: the scheme, the host, the method, the address a name
// resolves to, every redirect hop, and how many requests and bytes a call
// may use. Secrets are added to requests here, so a guest names a secret
// and never sees it.
//
// A Client serves one tool call. Each request is checked against the
// grant's rules before any connection is made (scheme, host, port,
// method), and again at connect time: the dialer resolves the name itself,
// refuses private, loopback, link-local, metadata and other non-public
// addresses unless the matching rule allows them, and connects to the
// address it checked, so a name that resolves differently a moment later
// (DNS rebinding) gains nothing. A net.Dialer Control function checks the
// socket's address once more. There is no proxy, and no connection is
// kept between requests.
//
// Redirects are followed here, not by net/http, so that every hop passes
// the same checks and its headers are built afresh: a secret goes only to
// hosts its grant names, and never over http once a chain has used https.
//
// A request that carries a secret may not choose the form or the part of
// its answer (Accept-Encoding, Accept-Charset, Range, If-Range, A-IM). The
// host asks for gzip itself and undoes any content coding it can (gzip,
// deflate) before the answer is checked, within the response limits;
// one it cannot undo is refused. The answer, headers and body, is then
// searched for the secret's value as it is and encoded (base64, hex,
// UTF-16, percent-encoding, JSON and HTML escapes, any case: see
// redactor), and each copy found is replaced. A redirect whose Location
// holds the secret is not followed, and no error or Denied holds a
// secret's value. docs/design.md (Permissions) says what this cannot
// catch.
package egress
