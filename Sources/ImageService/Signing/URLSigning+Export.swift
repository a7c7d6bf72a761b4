// URLSigner and SigningKey live in URLSigning, a library of their own so that an API server
// that only signs URLs builds no server stack (no Hummingbird, SwiftNIO, AsyncHTTPClient or
// BoringSSL). Re-exported: code that signs through `import ImageService` keeps compiling.
@_exported import URLSigning
