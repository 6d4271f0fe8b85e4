//! Safe is an allowlist down to each option (issue 13 §2). Rows by class: everyday use that must
//! stay Safe; unknown options, abbreviations and unknown attached forms (Medium, the reason names
//! the option); builtins that assign and printers of the whole environment (never Safe); code
//! runners (High, so no `-y` or grant covers them); configs from stdin; read-only subcommands
//! that used to be false alarms. Then properties over every table.

use proptest::prelude::*;
use rstest::rstest;

use super::programs::options::Options;
use super::rules::{PROGRAMS, Rule};
use crate::policy::{PolicyConfig, assess};
use crate::protocol::Risk::{self, High, Medium, Safe};

fn risk_of(command: &str) -> (Risk, Vec<String>) {
    let got = assess(command, &PolicyConfig::default());
    (got.risk, got.reasons)
}

#[rstest]
// ── files and text ───────────────────────────────────────────────────────────────────────────
#[case("ls -la")]
#[case("ls -lhS --color=auto /var/log")]
#[case("ls -l --time-style=long-iso")]
#[case("ls -1 --group-directories-first")]
#[case("ls -laR --hide='*.o'")]
#[case("ls -w80 -T 4")]
#[case("ls -- -weird-name")]
#[case("cat -n README.md")]
#[case("cat -A config.yaml")]
#[case("head -20 access.log")]
#[case("head -n 5 -q a b")]
#[case("head -c 100 f")]
#[case("tail -f /var/log/syslog")]
#[case("tail -n +5 f")]
#[case("tail -F --retry app.log")]
#[case("tail -100 f")]
#[case("tail -n 50 -f f")]
#[case("wc -l f")]
#[case("wc -lw --total=never a b")]
#[case("grep -rn TODO src/")]
#[case("grep -C3 x f")]
#[case("grep -E 'a|b' --include='*.rs' -r .")]
#[case("grep -v -e foo -e bar f")]
#[case("grep --color=always -i error log")]
#[case("grep -3 x f")]
#[case("grep -c processor /proc/cpuinfo")]
#[case("egrep -o '[0-9]+' f")]
#[case("zgrep -i oom /var/log/kern.log.2.gz")]
#[case("sort -k2 -n f")]
#[case("sort -t, -k3,3nr data.csv")]
#[case("sort -u --parallel=2 f")]
#[case("sort -o /dev/null f")]
#[case("uniq -c")]
#[case("uniq -f 1 -d in")]
#[case("cut -d: -f1 /etc/passwd")]
#[case("cut -c1-10 f")]
#[case("tr -d '\\r'")]
#[case("tr -s ' ' '\\n'")]
#[case("diff -u a b")]
#[case("diff -ruN dir1 dir2")]
#[case("diff --color=always -y a b")]
#[case("cmp -l a b")]
#[case("comm -23 a b")]
#[case("paste -sd, f")]
#[case("column -t -s, f.csv")]
#[case("nl -ba f")]
#[case("fold -w 80 f")]
#[case("stat -c %s f")]
#[case("stat --format='%U %a' f")]
#[case("du -sh *")]
#[case("du -h --max-depth=1 /var")]
#[case("du -ahx . --exclude=node_modules")]
#[case("df -h")]
#[case("df -hT -x tmpfs")]
#[case("df --output=source,pcent /")]
#[case("realpath --relative-to=/srv x")]
#[case("readlink -f /usr/bin/python3")]
#[case("basename -s .txt a.txt")]
#[case("dirname /a/b")]
#[case("file -b --mime-type f")]
#[case("tree -L 2 -a -I node_modules")]
#[case("jq -r '.items[].metadata.name' pods.json")]
#[case("jq -c --arg n x 'select(.name==$n)' f")]
#[case("jq '.spec.containers[].env' pod.json")]
#[case("yq '.metadata.name' deploy.yaml")]
#[case("yq -o json . f.yaml")]
#[case("rg -n 'fn main' src")]
#[case("rg -i --type rust -g '!target' unwrap")]
#[case("rg --files | head")]
#[case("strings -n 8 bin")]
#[case("hexdump -C f | head")]
#[case("xxd -l 64 f")]
#[case("od -An -tx1 f")]
#[case("base64 -d f")]
#[case("sha256sum -c SHA256SUMS")]
#[case("md5sum --quiet -c sums")]
#[case("seq -w 1 10")]
#[case("seq 5 -1 1")]
#[case("numfmt --to=iec 1048576")]
#[case("which -a python3")]
#[case("type -a ls")]
#[case("whereis nginx")]
#[case("locate -i nginx.conf")]
#[case("less +F app.log")]
#[case("less -R -S f")]
#[case("more -10 f")]
#[case("bat -n --paging=never f")]
#[case("man 5 crontab")]
#[case("man -k socket")]
#[case("apropos -s 8 mount")]
#[case("find . -name x -type f")]
#[case("find /var/log -type f -mtime +7 -size +10M -print0")]
#[case("find . -maxdepth 2 -name '*.rs' -not -path './target/*'")]
#[case("find . \\( -name a -o -name b \\) -printf '%p\\n'")]
#[case("find -L . -newermt 2024-01-01 -ls")]
#[case("tar -tzvf x.tgz")]
#[case("tar tf x.tar")]
#[case("tar --list --file=x.tar --wildcards '*.conf'")]
#[case("tar -xOf x.tgz etc/hosts")]
#[case("unzip -l x.zip")]
#[case("unzip -p x.zip a.txt")]
#[case("sed -n '1,20p' f")]
#[case("sed -E 's/a+/b/g' f")]
#[case("sed -ne 's/x/y/p' f")]
#[case("sed --expression='s/a/b/' f")]
#[case("sed -l 40 -n l f")]
#[case("awk -F: '{print $1}' /etc/passwd")]
#[case("awk -v n=3 'NR==n' f")]
#[case("gawk --posix '{print}' f")]
#[case("awk '/ERR/ {print \"bad: \" $0 > \"/dev/stderr\"}' f")]
// ── processes, system, network ────────────────────────────────────────────────────────────────
#[case("ps aux")]
#[case("ps -ef")]
#[case("ps -ef --forest")]
#[case("ps -eo pid,comm,%mem --sort=-%mem")]
#[case("ps -p 1 -o comm=")]
#[case("ps auxww")]
#[case("ps axo pid,cmd")]
#[case("ps u -p 1")]
#[case("pgrep -fl nginx")]
#[case("pidof sshd")]
#[case("pstree -p")]
#[case("top -b -n 1")]
#[case("vmstat 1 5")]
#[case("iostat -xz 1 3")]
#[case("free -h")]
#[case("free -m -s 2 -c 3")]
#[case("uptime -p")]
#[case("uname -a")]
#[case("id -un")]
#[case("who -b")]
#[case("last -n 10")]
#[case("lscpu -e")]
#[case("lsblk -f")]
#[case("lsblk -o NAME,SIZE,MOUNTPOINT")]
#[case("findmnt -t ext4")]
#[case("lsof -nP -iTCP -sTCP:LISTEN")]
#[case("lsof -i :8080")]
#[case("lsof +L1")]
#[case("lsof -p 1234")]
#[case("ss -tlnp")]
#[case("ss -tunap")]
#[case("ss -s")]
#[case("netstat -tulpn")]
#[case("ip -br a")]
#[case("ip -4 -o addr show")]
#[case("ip route get 1.1.1.1")]
#[case("dig +short example.com")]
#[case("dig @1.1.1.1 -t MX example.com")]
#[case("host -t txt example.com")]
#[case("nslookup -type=mx example.com")]
#[case("ping -c 3 -W 1 10.0.0.1")]
#[case("traceroute -n example.com")]
#[case("mtr -rw -c 5 example.com")]
#[case("dmesg -T | tail")]
#[case("dmesg --level=err,warn")]
#[case("sysctl net.ipv4.ip_forward")]
#[case("sysctl -a")]
#[case("date -u +%s")]
#[case("date -d @1700000000")]
#[case("date -Iseconds")]
#[case("date --iso-8601=seconds")]
#[case("lsb_release -a")]
#[case("java -version")]
#[case("rustc --version")]
#[case("gcc -v")]
#[case("hostname -I")]
#[case("hostnamectl status")]
#[case("timedatectl")]
#[case("journalctl -u nginx --since '1 hour ago'")]
#[case("journalctl -xe")]
#[case("journalctl -b -1 -p warning")]
#[case("journalctl -n 50 --no-pager")]
#[case("journalctl -k -f")]
#[case("journalctl --disk-usage")]
#[case("journalctl --cursor=s=abc -n 5")]
#[case("systemctl status nginx")]
#[case("systemctl is-active nginx")]
#[case("systemctl list-units --type=service --state=failed")]
#[case("systemctl --no-pager -l status x")]
#[case("systemctl show -p MainPID nginx")]
#[case("systemctl cat nginx")]
#[case("systemd-analyze blame")]
#[case("crontab -l")]
#[case("crontab -l -u deploy")]
#[case("iptables -L -n -v")]
#[case("iptables -t nat -S")]
#[case("nft list ruleset")]
#[case("mount")]
#[case("kill -l")]
#[case("service nginx status")]
#[case("service --status-all")]
#[case("ps aux | tee /dev/null")]
#[case("echo x | tee -a /dev/stderr")]
#[case("history 20")]
#[case("readelf -h bin")]
#[case("objdump -d bin | head")]
#[case("nm -D lib.so")]
#[case("sudo -l")]
// ── shell builtins ─────────────────────────────────────────────────────────────────────────────
#[case("cd /tmp")]
#[case("cd")]
#[case("cd -P ..")]
#[case("pwd -P")]
#[case("set -euo pipefail")]
#[case("set -x")]
#[case("set -o")]
#[case("set +e")]
#[case("alias")]
#[case("umask")]
#[case("ulimit -a")]
#[case("ulimit -n")]
#[case("shopt -s nullglob")]
#[case("printf '%s\\n' a b")]
#[case("printenv HOME")]
#[case("printenv PATH LANG")]
#[case("echo --anything -n goes")]
#[case("test -f x")]
#[case("hash")]
#[case("jobs -l")]
#[case("help cd")]
// ── git, containers, clusters, packages, keys ───────────────────────────────────────────────────
#[case("git status")]
#[case("git status -sb")]
#[case("git status --porcelain=v1")]
#[case("git log --oneline -n 5")]
#[case("git log -5 --stat")]
#[case("git log -n5 --pretty=format:'%h %s'")]
#[case("git log --graph --decorate --all")]
#[case("git log -S needle --since=2.weeks")]
#[case("git log -p -- src/main.rs")]
#[case("git log main..HEAD --no-merges")]
#[case("git --no-pager log -1")]
#[case("git -P diff")]
#[case("git diff --cached --stat")]
#[case("git diff -U0 --word-diff HEAD~1")]
#[case("git diff --name-only main...HEAD")]
#[case("git show --stat HEAD")]
#[case("git show HEAD:src/main.rs")]
#[case("git blame -L 10,20 f")]
#[case("git grep -n TODO")]
#[case("git branch -a")]
#[case("git branch -vv")]
#[case("git branch --merged main")]
#[case("git tag -l 'v1.*'")]
#[case("git remote -v")]
#[case("git remote show -n origin")]
#[case("git rev-parse --abbrev-ref HEAD")]
#[case("git rev-parse --show-toplevel")]
#[case("git rev-list --count HEAD")]
#[case("git describe --tags --always")]
#[case("git ls-files -m")]
#[case("git ls-tree -r --name-only HEAD")]
#[case("git cat-file -p HEAD")]
#[case("git shortlog -sn")]
#[case("git stash list")]
#[case("git stash show -p")]
#[case("git reflog -n 10")]
#[case("git config --get user.name")]
#[case("git config --list --show-origin")]
#[case("git config -l")]
#[case("git config get user.email")]
#[case("git config --global --get-regexp alias")]
#[case("git clean -n")]
#[case("git worktree list")]
#[case("git rev-list --objects --filter=blob:none HEAD")]
#[case("git diff --text a b")]
#[case("git --version")]
#[case("docker ps -a")]
#[case("docker ps --format '{{.Names}}'")]
#[case("docker images -q")]
#[case("docker logs --tail 50 -f web")]
#[case("docker inspect -f '{{.State.Status}}' web")]
#[case("docker stats --no-stream")]
#[case("docker system df -v")]
#[case("docker container ls -a")]
#[case("docker compose ps")]
#[case("docker compose logs --tail=100 web")]
#[case("docker --context prod ps")]
#[case("kubectl get pods -A -o wide")]
#[case("kubectl get pods -n kube-system")]
#[case("kubectl get deploy -l app=web -o name")]
#[case("kubectl get pods --field-selector=status.phase!=Running -A")]
#[case("kubectl get pods -w")]
#[case("kubectl get pods --all-namespaces=true")]
#[case("kubectl describe pod web-1")]
#[case("kubectl logs -f deploy/web --tail=100")]
#[case("kubectl logs web-1 -c app --previous")]
#[case("kubectl top pods --containers")]
#[case("kubectl explain pod.spec --recursive")]
#[case("kubectl api-resources --namespaced=true")]
#[case("kubectl config get-contexts")]
#[case("kubectl config current-context")]
#[case("kubectl rollout status deploy/web")]
#[case("kubectl auth can-i --list")]
#[case("kubectl version --client")]
#[case("helm list -A")]
#[case("helm status web -n prod")]
#[case("helm history web")]
#[case("apt list --installed")]
#[case("apt-cache policy nginx")]
#[case("apt show nginx")]
#[case("dpkg -l")]
#[case("dpkg -L nginx")]
#[case("dpkg -S /usr/bin/ls")]
#[case("rpm -qa")]
#[case("rpm -qi bash")]
#[case("pacman -Qi bash")]
#[case("pip list --outdated")]
#[case("pip show requests")]
#[case("pip3 freeze")]
#[case("npm ls -g --depth=0")]
#[case("npm view react version")]
#[case("npm config get registry")]
#[case("npm config list")]
#[case("cargo locate-project")]
#[case("go env GOPATH")]
#[case("go version")]
#[case("brew info jq")]
#[case("brew list --versions")]
#[case("openssl version")]
#[case("openssl version -a")]
#[case("openssl x509 -in c.pem -noout -dates")]
#[case("openssl x509 -in c.pem -noout -subject -issuer -fingerprint -sha256")]
#[case("openssl req -in r.csr -noout -text")]
#[case("openssl crl -in r.crl -noout -text")]
#[case("ssh-keygen -l -f ~/.ssh/id_ed25519.pub")]
#[case("ssh-keygen -lv -E md5 -f key.pub")]
#[case("ssh-keygen -F github.com")]
#[case("gpg --list-keys")]
#[case("gpg -k --with-colons")]
#[case("gpg --fingerprint alice")]
#[case("gpg --verify x.sig x")]
#[case("curl -sS https://example.com")]
#[case("curl -fsSL -H 'Accept: application/json' https://api.example.com/x")]
#[case("curl -s -o /dev/null -w '%{http_code}' https://example.com")]
#[case("curl -I --max-time 5 https://example.com")]
#[case("wget -qO- https://example.com")]
#[case("wget --spider https://example.com")]
#[case("ssh -V")]
#[case("ssh -Q cipher")]
#[case("nice -n 10 ls -la")]
#[case("nice -10 du -sh .")]
#[case("timeout 5 ping -c 1 x")]
#[case("timeout -s KILL 10s tail -f f")]
#[case("time ls")]
#[case("env LANG=C sort f")]
#[case("env -u HOME ls")]
#[case("xargs -0 -n1 wc -l")]
#[case("xargs -I{} grep -l x {}")]
#[case("watch -n 2 df -h")]
#[case("stdbuf -oL tail -f f")]
#[case("command -v git")]
#[case("fdisk -l")]
#[case("parted -l")]
#[case("sfdisk -l")]
#[case("terraform fmt -check -diff")]
#[case("terraform fmt -check -recursive")]
#[case("rclone ls remote:bucket --max-depth 1")]
#[case("rclone lsjson -R remote:x")]
#[case("nc -zv host 443")]
#[case("nc -z -w 3 host 22")]
// ── --help and --version alone, for any program opsai knows ─────────────────────────────────
#[case("rm --help")]
#[case("kubectl --help")]
#[case("docker --version")]
#[case("python3 --version")]
#[case("terraform --version")]
#[case("crontab --help")]
#[case("chmod --version")]
fn everyday_use_stays_safe(#[case] command: &str) {
    let (risk, reasons) = risk_of(command);
    assert_eq!(risk, Safe, "{command:?} should be Safe; reasons: {reasons:#?}");
}

#[rstest]
// ── unknown options: Medium, the reason names the option ───────────────────────────────────
#[case("ls --foo", "--foo")]
#[case("ls -la --zz", "--zz")]
#[case("ls -lQ9", "-9")]
#[case("cat --frobnicate f", "--frobnicate")]
#[case("cat -y f", "-y")]
#[case("head --bogus f", "--bogus")]
#[case("tail -j f", "-j")]
#[case("grep --pre=x foo", "--pre")]
#[case("grep -Y foo f", "-Y")]
#[case("sort --compress-program=gzip f", "runs another program")]
#[case("du --zz", "--zz")]
#[case("df -Q", "-Q")]
#[case("wc --bytes=3 f", "takes no value")]
#[case("stat --zz f", "--zz")]
#[case("find . -fstype nfs -zz", "-zz")]
#[case("find . -newerXY x", "-newerXY")]
#[case("sed --zz p f", "--zz")]
#[case("sed -j p f", "-j")]
#[case("awk --load=x '{print}'", "--load")]
#[case("awk -l ext '{print}'", "loads awk code")]
#[case("awk -f prog.awk f", "loads awk code")]
#[case("awk -o out.awk '{print}'", "writes")]
#[case("tree -o out.txt", "-o")]
#[case("tree -R -H . -o x.html", "-R")]
#[case("rg --pre ./x foo", "--pre")]
#[case("rg -z foo", "-z")]
#[case("rg --search-zip foo", "--search-zip")]
#[case("bat --pager=x f", "--pager")]
#[case("file -C -m magic", "-C")]
#[case("ps --zz", "--zz")]
#[case("ps auxQ", "Q")]
#[case("ss -K dst 1.2.3.4", "-K")]
#[case("ss -D out.bin", "-D")]
#[case("sar -o out 1 1", "-o")]
#[case("lsblk --zz", "--zz")]
#[case("ping -f host", "-f")]
#[case("dmesg --zz", "--zz")]
#[case("journalctl --cursor-file=/tmp/c", "writes")]
#[case("journalctl --zz", "--zz")]
#[case("systemctl --zz status x", "--zz")]
#[case("systemctl -H host status x", "another host")]
#[case("git --zz log", "--zz")]
#[case("git log --zz", "--zz")]
#[case("git log -O order", "-O")]
#[case("git diff --output=x", "writes")]
#[case("git help -w log", "browser")]
#[case("git --namespace status", "where a subcommand is expected")]
#[case("docker -l ps", "where a subcommand is expected")]
#[case("kubectl -n get pods", "changes the cluster")]
#[case("git status --zz", "--zz")]
#[case("docker --zz ps", "--zz")]
#[case("docker ps --zz", "--zz")]
#[case("docker -H tcp://x ps", "another host")]
#[case("docker --config /tmp/c ps", "credential helpers")]
#[case("kubectl --zz get pods", "--zz")]
#[case("kubectl get pods --zz", "--zz")]
#[case("kubectl --kubeconfig=./k.yaml get pods", "exec credential plugins")]
#[case("kubectl get pods --profile-output=x", "--profile-output")]
#[case("helm --zz list", "--zz")]
#[case("helm --kubeconfig k list", "exec credential plugins")]
#[case("curl --zz https://x", "--zz")]
#[case("curl -n https://x", "netrc")]
#[case("curl --netrc-file f https://x", "netrc")]
#[case("curl -K cfg https://x", "reads its options from a file")]
#[case("wget -O - --zz https://x", "--zz")]
#[case("ip -zz addr", "-z")]
#[case("apt -o Dir::Bin::dpkg=/tmp/x list", "-o")]
#[case("dpkg -x a.deb /tmp/x", "-x")]
#[case("npm ls --zz", "--zz")]
#[case("openssl x509 -in c -noout -engine e", "-engine")]
#[case("openssl x509 -in c -out d", "-out")]
#[case("openssl s_client -connect h:443", "openssl s_client")]
#[case("gpg --homedir /tmp/g --list-keys", "--homedir")]
#[case("ssh-keygen -R host", "creates or uses keys")]
#[case("ssh-keygen -l -f k -H", "-H")]
#[case("cd -X /tmp", "-X")]
#[case("cd a b", "argument")]
#[case("ulimit -n 4096", "argument")]
#[case("umask 077", "argument")]
#[case("alias ll='ls -l'", "argument")]
#[case("hash -p /tmp/x ls", "-p")]
#[case("dirs -c", "-c")]
#[case("wait -p v", "-p")]
#[case("jobs -x cmd", "-x")]
#[case("set -- a b", "positional")]
#[case("set -o bogusopt", "bogusopt")]
#[case("ssh -G host", "Match exec")]
#[case("ssh -F cfg host", "-F names an ssh config")]
#[case("tar -tf x --to-stdout --zz", "--zz")]
#[case("tar tXf x.tar", "letter X")]
#[case("tar -tf x.tar --checkpoint=100", "--checkpoint")]
#[case("nice --zz ls", "--zz")]
#[case("timeout --zz 5 ls", "--zz")]
#[case("env --zz ls", "--zz")]
#[case("xargs --zz ls", "--zz")]
#[case("watch --zz df", "--zz")]
#[case("time -Q ls", "-Q")]
#[case("systemctl --zz", "--zz")]
#[case("terraform output -zz", "-zz")]
#[case("rclone ls --config x remote:", "--config")]
#[case("nc -zl 80", "-l")]
#[case("service nginx status --zz", "changes a service")]
#[case("echo x | tee --zz", "--zz")]
#[case("gcc main.c", "compiles or runs code")]
#[case("bundle list", "runs code from the project")]
#[case("yarn", "runs code from the project")]
#[case("yarn list", "runs code from the project")]
#[case("composer show", "runs code from the project")]
#[case("java -jar app.jar", "compiles or runs code")]
#[case("fdisk -l --zz", "--zz")]
#[case("unzip -l -o x.zip", "extracts")]
// ── abbreviations: GNU getopt accepts them, the tables do not ───────────────────────────────
#[case("ls --al", "--al")]
#[case("ls --almost", "--almost")]
#[case("grep --ignore x f", "--ignore")]
#[case("sort --numeric f", "--numeric")]
#[case("sed --expr='s/a/b/' f", "--expr")]
#[case("sed --quie p f", "--quie")]
#[case("git log --onel", "--onel")]
#[case("du --max=1", "--max")]
#[case("tail --follo f", "--follo")]
#[case("journalctl --sinc today", "--sinc")]
// ── attached forms the table does not know ────────────────────────────────────────────────────
#[case("ls --all=yes", "takes no value")]
#[case("cat --number=3 f", "takes no value")]
#[case("head -x5 f", "-x")]
#[case("grep --count=2 x f", "takes no value")]
#[case("ls -$x", "computed at run time")]
fn unknown_options_are_medium_and_named(#[case] command: &str, #[case] named: &str) {
    let (risk, reasons) = risk_of(command);
    assert_eq!(risk, Medium, "{command:?}: reasons {reasons:#?}");
    assert!(reasons.iter().any(|r| r.contains(named)), "{command:?}: no reason names {named:?}: {reasons:#?}");
}

#[rstest]
// ── builtins that assign a variable, and printers of the whole environment: never Safe ──────
#[case("read x", "assigns")]
#[case("read -r line < f", "assigns")]
#[case("mapfile -t lines < f", "assigns")]
#[case("readarray a < f", "assigns")]
#[case("printf -v x '%s' y", "printf -v")]
#[case("printf -vx y", "printf -v")]
#[case("declare -n ref=x", "never Safe")]
#[case("declare x=1", "never Safe")]
#[case("declare -p", "never Safe")]
#[case("typeset -A m", "never Safe")]
#[case("local x", "never Safe")]
#[case("readonly", "never Safe")]
#[case("export A=1", "never Safe")]
#[case("export -p", "never Safe")]
#[case("let x=1+2", "assigns")]
#[case("getopts ab opt", "assigns")]
#[case("unset x", "unsets")]
#[case("shift", "positional")]
#[case("env", "whole environment")]
#[case("env -0", "whole environment")]
#[case("env | base64", "whole environment")]
#[case("env -u HOME", "whole environment")]
#[case("printenv", "whole environment")]
#[case("printenv -0", "whole environment")]
#[case("set", "every shell variable")]
#[case("ps e", "environment")]
#[case("ps eww", "environment")]
#[case("ps auxe", "environment")]
#[case("ps -ef e", "environment")]
#[case("ps axe -o pid,cmd", "environment")]
#[case("jq -n env", "environment")]
#[case("jq -n '$ENV.HOME'", "environment")]
#[case("yq -n 'strenv(HOME)'", "environment")]
#[case("awk 'BEGIN{for (k in ENVIRON) print k}'", "ENVIRON")]
#[case("systemctl show-environment", "environment")]
#[case("docker inspect -f '{{.Config.Env}}' web", "environment")]
fn assigning_builtins_and_environment_printers_are_never_safe(#[case] command: &str, #[case] named: &str) {
    let (risk, reasons) = risk_of(command);
    assert!(risk >= Medium, "{command:?} must not be Safe");
    assert!(reasons.iter().any(|r| r.contains(named)), "{command:?}: no reason mentions {named:?}: {reasons:#?}");
}

#[rstest]
// ── code runners with a payload: High, so no `-y` and no grant covers them ──────────────────
#[case("awk 'BEGIN{system(\"id\")}'", "system()")]
#[case("awk '{print | \"sh\"}' f", "pipes output")]
#[case("awk 'BEGIN{\"id\" | getline x}'", "pipe")]
#[case("awk '{print > \"/tmp/x\"}' f", "writes a file")]
#[case("awk 'BEGIN{f=\"system\"; @f(\"id\")}'", "@f")]
#[case("gawk -e 'BEGIN{system(\"id\")}'", "system()")]
#[case("sed 's/a/b/e' f", "runs commands")]
#[case("sed '1e id' f", "runs commands")]
#[case("sed 'w /tmp/x' f", "writes files")]
#[case("sed 's/a/b/w out' f", "writes files")]
#[case("sed -n '1W out' f", "writes files")]
#[case("sed '1r /etc/shadow' f", "reads a file")]
#[case("sed 'R ~/.ssh/id_rsa' f", "reads a file")]
#[case("perl -e 'print 1'", "inline perl")]
#[case("perl -ne 'print' f", "inline perl")]
#[case("perl -E 'say 1'", "inline perl")]
#[case("python3 -c 'print(1)'", "inline python3")]
#[case("python -Ic 'import os'", "inline python")]
#[case("ruby -e 'puts 1'", "inline ruby")]
#[case("node -e 'console.log(1)'", "inline node")]
#[case("node --eval=1", "inline node")]
#[case("node -p 1", "inline node")]
#[case("php -r 'echo 1;'", "inline php")]
#[case("lua -e 'print(1)'", "inline lua")]
#[case("pwsh -Command Get-Date", "inline pwsh")]
#[case("git -c core.pager=id log", "core.pager")]
#[case("git -c core.fsmonitor=x status", "core.fsmonitor")]
#[case("git -c alias.st='!id' st", "alias.st")]
#[case("git -c diff.external=x diff", "diff.external")]
#[case("git -c filter.x.smudge=id checkout .", "filter.x.smudge")]
#[case("git -ccore.hooksPath=/tmp status", "core.hookspath")]
#[case("git --config-env=core.pager=X log", "core.pager")]
#[case("git --exec-path=/tmp/x status", "--exec-path")]
#[case("git diff --ext-diff", "external diff")]
#[case("git diff --ext", "external diff")]
#[case("git log --textc -p", "text conversion")]
#[case("git log --textconv -p", "text conversion")]
#[case("git cat-file --filters HEAD:x", "filter programs")]
#[case("git grep -O'id' x", "pager")]
#[case("git ls-remote --upload-pack='touch /tmp/pwn' .", "remote helper")]
#[case("git fetch --upload-pack=id origin", "remote helper")]
#[case("git rebase -x 'make test' main", "git rebase runs")]
#[case("git bisect run ./t.sh", "git bisect runs")]
#[case("git submodule foreach 'id'", "git submodule runs")]
#[case("git push --receive-pack=id origin", "remote helper")]
#[case("docker run -v /:/host alpine", "host's root")]
#[case("docker run -v /tmp:/x alpine", "host directory")]
#[case("docker run --mount type=bind,source=/etc,target=/e alpine", "host")]
#[case("docker run --privileged alpine", "full access")]
#[case("docker run --pid=host alpine", "full access")]
#[case("docker run --pid host alpine", "full access")]
#[case("docker run --network=host alpine", "full access")]
#[case("docker run --device /dev/sda alpine", "full access")]
#[case("docker run --cap-add=NET_ADMIN alpine", "full access")]
#[case("podman run --security-opt seccomp=unconfined alpine", "full access")]
#[case("tar -cf x.tar --to-command=id .", "code runner")]
#[case("tar -xf x.tar --use-compress-program=id", "code runner")]
#[case("tar -I id -xf x.tar", "code runner")]
#[case("tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=id .", "code runner")]
#[case("find . -exec rm {} \\;", "deletes every file")]
#[case("find ~ -execdir ls \\;", "holds secrets")]
#[case("find . -name '*.pem' -exec cat {} \\;", "named like secrets")]
#[case("find . -delete", "deletes")]
#[case("find . -fprint /tmp/list", "writes the list")]
#[case("find . -fprintf /tmp/l '%p'", "writes the list")]
#[case("find . -fls /tmp/l", "writes the list")]
#[case("rsync -e 'sh -c id' a b", "code runner")]
#[case("rsync --rsync-path='id' a host:b", "code runner")]
#[case("ssh -o ProxyCommand='id' host", "proxycommand")]
#[case("ssh -oLocalCommand=id -oPermitLocalCommand=yes host", "localcommand")]
#[case("scp -o ProxyCommand=id a host:b", "proxycommand")]
#[case("scp -S ./evil a host:b", "-S")]
#[case("less '+!id' f", "+!cmd")]
#[case("man -P id ls", "man run a program")]
#[case("man --pager=id ls", "man run a program")]
#[case("man -H ls", "man run a program")]
#[case("xargs sh -c 'id'", "xargs runs sh")]
#[case("xargs -0 bash -c 'echo $0'", "xargs runs bash")]
#[case("xargs perl -e 1", "xargs runs perl")]
#[case("zip -TT 'id' a.zip b", "zip -TT")]
#[case("zip a.zip b --unzip-command=id", "zip -TT")]
#[case("vim -c '!id' f", "code runner")]
#[case("vim +'!id' f", "code runner")]
#[case("nvim --cmd 'lua os.execute(\"id\")'", "code runner")]
#[case("emacs --eval '(shell-command \"id\")'", "code runner")]
#[case("gdb -ex 'shell id' -batch", "code runner")]
#[case("rpm --eval '%(id)'", "%(")]
// ── secrets dumped by a read-only command ───────────────────────────────────────────────────
#[case("kubectl get --raw=/api/v1/namespaces/x/secrets", "Secrets")]
#[case("kubectl get --raw /api/v1/secrets", "Secrets")]
#[case("terraform state pull", "secrets included")]
#[case("terraform output -json", "secrets included")]
#[case("terraform show -json", "secrets included")]
#[case("parted -s /dev/sda mklabel gpt", "partitions")]
// ── configs from stdin or a here-string, per program ──────────────────────────────────────────
#[case("kubectl --kubeconfig=/dev/stdin get pods", "stdin")]
#[case("kubectl --kubeconfig - get pods", "stdin")]
#[case("ssh -F /dev/stdin host", "stdin")]
#[case("ssh -F - host <<< 'ProxyCommand id'", "stdin")]
#[case("curl -K - https://x", "stdin")]
#[case("curl --config /dev/stdin https://x", "stdin")]
#[case("wget --config=/dev/stdin https://x", "stdin")]
fn code_runners_stdin_configs_and_secret_dumps_are_high(#[case] command: &str, #[case] named: &str) {
    let (risk, reasons) = risk_of(command);
    assert_eq!(risk, High, "{command:?}: reasons {reasons:#?}");
    let lower: Vec<String> = reasons.iter().map(|r| r.to_lowercase()).collect();
    let needle = named.to_lowercase();
    assert!(lower.iter().any(|r| r.contains(&needle)), "{command:?}: no reason mentions {named:?}: {reasons:#?}");
}

/// Letters a table does not list, as options or single-dash words.
fn unlisted_letters(table: &Options) -> Vec<char> {
    ('a'..='z')
        .chain('A'..='Z')
        .filter(|c| !table.short.contains(*c) && !table.words.iter().any(|w| w.trim_end_matches('=') == c.to_string()))
        .collect()
}

/// The letters of a getopt string that take no value.
fn flag_letters(table: &Options) -> Vec<char> {
    let spec: Vec<char> = table.short.chars().collect();
    spec.iter().enumerate().filter(|(i, c)| **c != ':' && spec.get(i + 1) != Some(&':')).map(|(_, c)| *c).collect()
}

fn option_tables() -> Vec<(&'static str, &'static Options)> {
    PROGRAMS
        .iter()
        .filter_map(|(names, rule)| match rule {
            Rule::Options(table) => Some(names.iter().map(move |name| (*name, *table))),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Read-only invocations of programs whose rule is a function (subcommands, scripts, values).
const CUSTOM_SAFE: &[&str] = &[
    "git log", "git status", "git diff", "kubectl get pods", "docker ps", "docker compose ps", "helm list",
    "systemctl status x", "journalctl -u x", "ps aux", "find .", "sed -n p f", "sort f", "uniq f", "xxd f",
    "tar -tf x.tar", "unzip -l x.zip", "curl https://x", "wget -qO- https://x", "jq . f", "yq . f", "less f", "man ls",
    "history", "date", "dmesg", "sysctl -a", "hostname", "crontab -l", "apt list", "dpkg -l", "rpm -qa", "npm ls",
    "pip list", "openssl version", "gpg --list-keys", "ssh-keygen -l -f k", "systemd-analyze blame", "ip addr",
    "iptables -L", "printenv HOME", "set -e",
];

#[test]
fn custom_safe_bases_are_safe() {
    for command in CUSTOM_SAFE {
        let (risk, reasons) = risk_of(command);
        assert_eq!(risk, Safe, "{command:?}: {reasons:#?}");
    }
}

#[test]
fn help_or_version_alone_is_safe_for_every_known_program() {
    for (names, rule) in PROGRAMS {
        if matches!(rule, Rule::Fixed(High, _)) {
            continue;
        }
        // `[`/`[[` need their closing bracket to parse; `coproc`/`time` are shell keywords.
        for name in names.iter().filter(|n| !matches!(**n, "[" | "[[" | "coproc" | "time")) {
            for flag in ["--help", "--version"] {
                let command = format!("{name} {flag}");
                let (risk, reasons) = risk_of(&command);
                assert_eq!(risk, Safe, "{command:?}: {reasons:#?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0a11_0715),
        ..ProptestConfig::default()
    })]

    /// Appending an option the table does not list never leaves a Safe-table program Safe.
    #[test]
    fn an_unknown_option_is_never_safe(pick in any::<prop::sample::Index>(), letter in any::<prop::sample::Index>(), suffix in "[a-z0-9-]{0,8}", long in any::<bool>()) {
        let tables = option_tables();
        let (name, table) = tables[pick.index(tables.len())];
        let letters = unlisted_letters(table);
        let option = if long || letters.is_empty() {
            format!("--zz{suffix}")
        } else {
            format!("-{}", letters[letter.index(letters.len())])
        };
        let command = format!("{name} {option}");
        let (risk, reasons) = risk_of(&command);
        prop_assert!(risk >= Medium, "{:?} is Safe", command);
        prop_assert!(reasons.iter().any(|r| r.contains(&option) || r.contains("argument")), "{:?}: {:?}", command, reasons);
    }

    /// And the other way round: any cluster of a table's own flag letters stays Safe (the tables
    /// must not raise false alarms on forms they list).
    #[test]
    fn a_cluster_of_known_flags_is_safe(pick in any::<prop::sample::Index>(), chosen in prop::collection::vec(any::<prop::sample::Index>(), 1..5)) {
        let tables: Vec<_> = option_tables().into_iter().filter(|(_, t)| !flag_letters(t).is_empty()).collect();
        let (name, table) = tables[pick.index(tables.len())];
        let flags = flag_letters(table);
        let cluster: String = chosen.iter().map(|i| flags[i.index(flags.len())]).collect();
        let command = format!("{name} -{cluster}");
        let (risk, reasons) = risk_of(&command);
        prop_assert_eq!(risk, Safe, "{:?}: {:?}", command, reasons);
    }

    /// The same for the programs whose rule is a function: an unknown option right after the
    /// program name (where a global option would go) is never Safe.
    #[test]
    fn an_unknown_option_before_a_subcommand_is_never_safe(pick in any::<prop::sample::Index>(), suffix in "[a-z0-9]{1,8}") {
        let base = CUSTOM_SAFE[pick.index(CUSTOM_SAFE.len())];
        let (program, rest) = base.split_once(' ').unwrap_or((base, ""));
        let command = format!("{program} --zz{suffix} {rest}");
        let (risk, _) = risk_of(&command);
        prop_assert!(risk >= Medium, "{:?} is Safe", command);
    }
}

#[test]
fn a_dangerous_letter_inside_a_cluster_still_counts_but_not_inside_a_value() {
    for (command, want) in
        [("date -us 10:00", High), ("date -s now", High), ("date -Iseconds", Safe), ("date -Is", Safe)]
    {
        let (risk, reasons) = risk_of(command);
        assert_eq!(risk, want, "{command:?}: {reasons:#?}");
    }
}
