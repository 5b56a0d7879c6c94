// authentication.k8s.io/v1 UserInfo: who made a request, as kube-apiserver tells webhooks in
// AdmissionReview.request.userInfo and as a SubjectAccessReview asks about. A Kubernetes API type,
// so it lives with the other shared API shapes: admission/ decodes it, kube/ sends it, and the
// OwnedAccessKey rules in accesskeys/ read it, without any of them importing another for it.

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}
