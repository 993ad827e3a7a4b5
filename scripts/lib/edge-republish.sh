#!/usr/bin/env bash
# Publish the second sample build (.cache/edge/index2, made by edge_prepare) to every
# target's store while they serve: the native directory (file://), moto (s3://) and local R2
# (new objects, then the pointer). Called by tests/tests/edge_parity.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/s3-server.sh
. scripts/lib/s3-server.sh
# shellcheck source=scripts/lib/edge-targets.sh
. scripts/lib/edge-targets.sh
# shellcheck disable=SC1091
. "$EDGE/targets.env"
"$INDEX_BUILDER" publish "$EDGE/index2" --to "file://$EDGE/native-index" >/dev/null
AWS_ENDPOINT_URL="$S3_ENDPOINT" "$INDEX_BUILDER" publish "$EDGE/index2" --to "s3://$EDGE_BUCKET/$EDGE_PREFIX" >/dev/null
edge_r2_put "$EDGE/index2" "$EDGE/index"
