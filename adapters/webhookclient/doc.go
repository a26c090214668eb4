// Package webhookclient posts webhooks over HTTP with a client that refuses
// to reach private networks: every address a host resolves to is checked
// as the connection is made (net.Dialer.Control), so a name that resolves
// to a loopback or private address, at registration or later (DNS
// rebinding), is refused. It follows no redirect and uses no proxy.
package webhookclient
