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
// No error, Denied, or response contains a secret's value: errors are
// scrubbed, and a response that echoes the secret verbatim has it replaced.
package egress
