#!/usr/bin/env bash
# Builds a FreeSWITCH 1.10.12 configuration folder for the call origination daemon (cod):
# FreeSWITCH's vanilla configuration + this folder's files + the edits of docs/deploy.md
# ("Steps" 2-5). The guide tells operators to run this script, and the real-FreeSWITCH test lane
# (test/realfs/) builds its configuration with it: the guide's steps are the script's steps.
#
#   freeswitch/prepare-conf.sh --vanilla /usr/share/freeswitch/conf/vanilla --out /etc/freeswitch.new \
#     --domain example.test --esl-password "$(openssl rand -hex 24)" \
#     --xml-curl-url http://127.0.0.1:8081/freeswitch/xml_curl --xml-curl-credentials "freeswitch:<pw>" \
#     --external-ip 203.0.113.7 --carrier 198.51.100.20 [--carrier-cidr 198.51.100.20/32]
#
# Options (all but --vanilla and --out have the defaults shown in docs/deploy.md):
#   --vanilla DIR             the vanilla configuration (Debian: /usr/share/freeswitch/conf/vanilla)
#   --out DIR                 where the prepared configuration is written (must not exist, or be empty)
#   --domain NAME             the daemon's domain (its domains/<name>.yaml); calls from the carrier run
#                             in its dialplan context
#   --esl-password PW         mod_event_socket password (= daemon.yaml freeswitch.password)
#   --esl-port PORT           mod_event_socket port, on 127.0.0.1 (default 8021)
#   --xml-curl-url URL        the daemon's xml_curl listener (not its API listener):
#                             http://<xml_curl.host>:<xml_curl.port><xml_curl.path>/xml_curl of daemon.yaml
#                             (default http://127.0.0.1:8081/freeswitch/xml_curl)
#   --xml-curl-credentials U:P  xml_curl.username:xml_curl.password of daemon.yaml
#   --external-ip ADDR        the address phones and the carrier reach this host at (ext-sip-ip/ext-rtp-ip);
#                             mandatory: vanilla's STUN lookup makes mod_sofia fail to load when it fails
#   --local-ip ADDR           the address the SIP profile binds (default: FreeSWITCH detects local_ip_v4)
#   --sip-port PORT           the internal profile's SIP port (default 5060)
#   --rtp-ports LOW-HIGH      RTP port range (default vanilla's 16384-32768)
#   --carrier HOST[:PORT]     the carrier's SIP address: the pstn gateway's proxy and realm
#   --carrier-cidr CIDR       addresses the carrier's calls come from (default HOST/32); must not cover
#                             phones' addresses (their calls would skip authentication)
#   --carrier-user U --carrier-password P --carrier-register true|false   gateway credentials
#   --codecs LIST             global codec preferences (default OPUS,PCMU,PCMA: vanilla's G722 needs mod_spandsp)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

vanilla='' out='' domain=example.test esl_password='' esl_port=8021
xml_curl_url=http://127.0.0.1:8081/freeswitch/xml_curl xml_curl_credentials=''
external_ip='' local_ip='' sip_port=5060 rtp_ports='' carrier='' carrier_cidr=''
carrier_user=carrier-account carrier_password=carrier-password carrier_register=false codecs=OPUS,PCMU,PCMA
while [ $# -gt 0 ]; do
  opt=$1; val=${2:-}
  case "$opt" in
    --vanilla) vanilla=$val ;; --out) out=$val ;; --domain) domain=$val ;;
    --esl-password) esl_password=$val ;; --esl-port) esl_port=$val ;;
    --xml-curl-url) xml_curl_url=$val ;; --xml-curl-credentials) xml_curl_credentials=$val ;;
    --external-ip) external_ip=$val ;; --local-ip) local_ip=$val ;; --sip-port) sip_port=$val ;;
    --rtp-ports) rtp_ports=$val ;; --carrier) carrier=$val ;; --carrier-cidr) carrier_cidr=$val ;;
    --carrier-user) carrier_user=$val ;; --carrier-password) carrier_password=$val ;;
    --carrier-register) carrier_register=$val ;; --codecs) codecs=$val ;;
    *) echo "unknown option $opt (see the top of $0)" >&2; exit 2 ;;
  esac
  shift 2
done
die() { echo "prepare-conf: $*" >&2; exit 1; }
[ -f "$vanilla/freeswitch.xml" ] || die "--vanilla must be the vanilla configuration folder (with freeswitch.xml)"
[ -n "$out" ] || die "--out is required"
[ -n "$esl_password" ] || die "--esl-password is required (openssl rand -hex 24)"
[ "$esl_password" != ClueCon ] || die "--esl-password must not be the well-known ClueCon"
[[ "$xml_curl_credentials" == *:* ]] || die "--xml-curl-credentials user:password is required"
[[ "$xml_curl_url" == */xml_curl ]] || die "--xml-curl-url must end in /xml_curl (xml_curl.path + /xml_curl)"
[ -n "$external_ip" ] || die "--external-ip is required (the STUN lookup of vanilla is not used)"
[[ "$domain" =~ ^(default|public|features)$ ]] && die "--domain must not be a vanilla context name"
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then die "$out exists and is not empty"; fi
carrier_host=${carrier%%:*}
[ -z "$carrier_cidr" ] && [ -n "$carrier" ] && carrier_cidr="$carrier_host/32"

# Replaces the value of <param name="$2" value="..."/> in file $1 (the first match on a line).
param() { sed -i -E "s|(<param name=\"$2\" value=\")[^\"]*(\")|\1$(esc "$3")\2|" "$1"; }
# The same, only inside <gateway name="pstn"> of the profile.
gwparam() { sed -i -E "/<gateway name=\"pstn\">/,/<\/gateway>/ s|(<param name=\"$2\" value=\")[^\"]*(\")|\1$(esc "$3")\2|" "$1"; }
esc() { printf '%s' "$1" | sed -e 's/[|&\\]/\\&/g'; }
# Replaces the X-PRE-PROCESS line (set or stun-set) of variable $1 in vars.xml by a plain set.
setvar() {
  if grep -qE "data=\"$1=" "$out/vars.xml"; then
    sed -i -E "s|<X-PRE-PROCESS cmd=\"(stun-)?set\" data=\"$1=[^\"]*\"/>|<X-PRE-PROCESS cmd=\"set\" data=\"$1=$(esc "$2")\"/>|" "$out/vars.xml"
  else
    sed -i -E "s|</include>|  <X-PRE-PROCESS cmd=\"set\" data=\"$1=$(esc "$2")\"/>\n</include>|" "$out/vars.xml"
  fi
}

# Step 2: vanilla + the project's files; vanilla's other SIP profiles removed.
mkdir -p "$out"
cp -R "$vanilla"/. "$out"/
cp "$here"/autoload_configs/*.xml "$out/autoload_configs/"
cp "$here/sip_profiles/internal.xml" "$out/sip_profiles/internal.xml"
rm -rf "$out/sip_profiles/external" "$out/sip_profiles/external.xml" \
  "$out/sip_profiles/external-ipv6" "$out/sip_profiles/external-ipv6.xml" "$out/sip_profiles/internal-ipv6.xml"

# Step 3: passwords and the daemon's address.
param "$out/autoload_configs/event_socket.conf.xml" password "$esl_password"
param "$out/autoload_configs/event_socket.conf.xml" listen-port "$esl_port"
param "$out/autoload_configs/xml_curl.conf.xml" gateway-url "$xml_curl_url"
param "$out/autoload_configs/xml_curl.conf.xml" gateway-credentials "$xml_curl_credentials"

# Step 4: no static users (vanilla's 1000-1019 / 1234 and its groups of pointers to them), no
# well-known default_password, no STUN, explicit codecs and ports.
mkdir -p "$out/directory.disabled"
mv "$out/directory"/* "$out/directory.disabled/" 2>/dev/null || true
setvar default_password "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
setvar external_rtp_ip "$external_ip"
setvar external_sip_ip "$external_ip"
[ -n "$local_ip" ] && setvar local_ip_v4 "$local_ip"
setvar internal_sip_port "$sip_port"
setvar global_codec_prefs "$codecs"
setvar outbound_codec_prefs "$codecs"
if [ -n "$rtp_ports" ]; then
  sed -i -E "s|<!-- *<param name=\"rtp-start-port\" value=\"[0-9]+\"/> *-->|<param name=\"rtp-start-port\" value=\"${rtp_ports%-*}\"/>|; s|<!-- *<param name=\"rtp-end-port\" value=\"[0-9]+\"/> *-->|<param name=\"rtp-end-port\" value=\"${rtp_ports#*-}\"/>|" \
    "$out/autoload_configs/switch.conf.xml"
fi

# Step 5: the gateway, and the carrier's calls into the domain's context without a challenge.
gw="$out/sip_profiles/internal.xml"
gwparam "$gw" context "$domain"
if [ -n "$carrier" ]; then
  gwparam "$gw" proxy "$carrier"
  gwparam "$gw" realm "$carrier"
  gwparam "$gw" username "$carrier_user"
  gwparam "$gw" password "$carrier_password"
  gwparam "$gw" register "$carrier_register"
  sed -i -E "s|</network-lists>|  <list name=\"carriers\" default=\"deny\">\n      <node type=\"allow\" cidr=\"$carrier_cidr\"/>\n    </list>\n  </network-lists>|" \
    "$out/autoload_configs/acl.conf.xml"
  sed -i -E "s|<!-- *<param name=\"apply-inbound-acl\" value=\"carriers:[^\"]*\"/> *-->|<param name=\"apply-inbound-acl\" value=\"carriers:$domain\"/>|" "$gw"
fi
echo "prepare-conf: FreeSWITCH configuration for $domain written to $out"
