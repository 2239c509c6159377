#!/usr/bin/env bash
# Here, from the project root: tar the wheelhouse and model files into chunks that fit beside the tree under the
# 64 MiB a call carries (CHUNK bytes each, default 34 MB for a tree of about 27 MB), in .ship00, .ship01, ...
#   CHUNK=37000000 bash tools/gpu-machine/pack.sh .whl qwen2.5-coder-0.5b.gguf
# There: one call per chunk, back to back, each carrying only its folder: `bash .shipNN/recv.sh`; the one that
# brings the last chunk checks the sha256 and unpacks /tmp/payload (.whl/ and the model files).
set -eu
size=${CHUNK:-34000000}
rm -rf .ship[0-9]*; tmp=$(mktemp -d)
tar cf "$tmp/payload.tar" "$@"
sum=$(sha256sum "$tmp/payload.tar" | cut -c1-64)
split -b $size -d -a 2 "$tmp/payload.tar" "$tmp/chunk."; rm "$tmp/payload.tar"
n=$(ls "$tmp" | wc -l)
for c in "$tmp"/chunk.*; do
  k=${c##*.}; mkdir -p ".ship$k"; mv "$c" ".ship$k/"
  cat > ".ship$k/recv.sh" <<R
#!/usr/bin/env bash
set -eu
here=\$(cd "\$(dirname "\$0")" && pwd)
mkdir -p /tmp/ship/.parts && cp "\$here"/chunk.$k /tmp/ship/.parts/
have=\$(ls /tmp/ship/.parts | wc -l); echo "chunk $k; \$have of $n here"
if [ "\$have" -eq $n ]; then
  cat /tmp/ship/.parts/chunk.* > /tmp/ship/payload.tar && rm -rf /tmp/ship/.parts
  [ "\$(sha256sum /tmp/ship/payload.tar | cut -c1-64)" = "$sum" ] || { echo "sha256 mismatch"; exit 1; }
  mkdir -p /tmp/payload && tar xf /tmp/ship/payload.tar -C /tmp/payload && rm /tmp/ship/payload.tar && echo "payload assembled"; ls -la /tmp/payload
fi
R
done
rmdir "$tmp"; echo "$n chunks"
